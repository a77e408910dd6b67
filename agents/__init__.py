"""Agent implementations, their prompts, and the model / embedding factories."""
