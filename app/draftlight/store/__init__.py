"""Models on disk and on the Hugging Face hub. Imports no Qt."""
