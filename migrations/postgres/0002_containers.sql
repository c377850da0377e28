-- The latest snapshot of each container kept in the store (state, not audit: replaced).
CREATE TABLE container_snapshots (
    container_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used BIGINT NOT NULL,
    started BIGINT NOT NULL,
    saved_at BIGINT NOT NULL,
    snapshot BYTEA NOT NULL,
    -- The engine's state of an execution waiting for client tool results, as JSON.
    run_state TEXT
);

-- Which node runs a container, until when (several nodes sharing one database).
CREATE TABLE container_leases (
    container_id TEXT PRIMARY KEY,
    node TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
