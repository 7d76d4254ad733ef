"""The chat's text: chat templates (rendered in a bounded child), control tokens kept as text,
fitting a conversation into the context, and vocabularies (mapping one onto another, whether a
draft can draft for a target). May import `core`."""
