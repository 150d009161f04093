"""Data readers: corpora, instruct and preference JSONL, images, the batches
they feed a recipe, and the sample data toy ships."""
