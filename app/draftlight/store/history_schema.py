"""The history's tables (history.py), and how an older file gets what it lacks: version 1 the
search index, versions 1 and 2 branches, where each message then follows the one before it in
its conversation and the last one is shown. One transaction: a migration that fails leaves the
file as it was."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 3  # 2: the messages_fts index; 3: branches (parent_id, shown_leaf)

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    shown_leaf INTEGER  -- the last message of the branch shown (NULL: none yet)
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    text TEXT NOT NULL,
    provenance TEXT,  -- JSON [[start, end, tokens], ...] of accepted draft runs
    stats TEXT,  -- JSON of Stats.to_dict()
    status TEXT NOT NULL CHECK (status IN ('complete', 'interrupted')),
    mode TEXT,
    created REAL NOT NULL,
    -- the message it answers or follows (NULL: the first); siblings are branches
    parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id);
CREATE INDEX IF NOT EXISTS messages_by_parent ON messages(parent_id);
-- Substring search over message text (case-insensitive), kept in step by the triggers.
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    text, content='messages', content_rowid='id', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
"""


# Versions 1 and 2 kept a conversation as a list: each message follows the one before it.
BRANCHES = """
ALTER TABLE conversations ADD COLUMN shown_leaf INTEGER;
ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE;
UPDATE messages SET parent_id = (
    SELECT earlier.id FROM messages AS earlier
    WHERE earlier.conversation_id = messages.conversation_id AND earlier.id < messages.id
    ORDER BY earlier.id DESC LIMIT 1);
UPDATE conversations SET shown_leaf = (
    SELECT max(id) FROM messages WHERE conversation_id = conversations.id);
"""


def migrate(db: sqlite3.Connection) -> None:
    """Create the tables of a new file, or add what an older one lacks."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    old = version > 0 or db.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'messages'").fetchone() is not None
    steps = []
    if old and version < 3:
        steps.append(BRANCHES)
    if old and version < 2:
        steps.append("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');")
    try:
        db.executescript(f"BEGIN; {steps[0] if steps else ''} {SCHEMA} "
                         f"{' '.join(steps[1:])} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
    except sqlite3.Error:
        if db.in_transaction:
            db.rollback()
        raise
