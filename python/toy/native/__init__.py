"""The C library: loading it for a device (library) and the Session over its calls."""
