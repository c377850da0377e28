-- Files of the Files API: uploaded by a key, or written by an execution (state, not audit:
-- the audit chain records each file's name, size and hash, never its bytes).
CREATE TABLE files (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    filename TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    -- 'upload', or 'output' for a file an execution created or changed.
    source TEXT NOT NULL,
    container_id TEXT,
    execution_id TEXT,
    content BLOB NOT NULL
);

-- One key's files, newest first (the listing's pages).
CREATE INDEX files_owner_created ON files (owner, created_at, id);
