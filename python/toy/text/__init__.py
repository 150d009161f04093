"""Text: tokenizers, chat templates (sandboxed Jinja) and conversations rendered with them."""
