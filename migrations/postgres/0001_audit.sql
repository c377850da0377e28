-- The audit trail: one hash chain of records per container, appended to, never changed.
CREATE TABLE audit_records (
    container_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    execution_id TEXT,
    recorded_at BIGINT NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (container_id, seq)
);
CREATE INDEX audit_records_execution ON audit_records (execution_id);

CREATE FUNCTION audit_records_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit records are append-only';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_records_append_only BEFORE UPDATE ON audit_records
    FOR EACH ROW EXECUTE FUNCTION audit_records_append_only();

-- Containers whose chains the store holds.
CREATE TABLE containers (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    seed TEXT NOT NULL,
    image_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- An index over the chains for listing and filtering; derived, so it may be updated.
CREATE TABLE executions (
    id TEXT PRIMARY KEY,
    container_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    number BIGINT NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT,
    return_code BIGINT,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    tools TEXT NOT NULL DEFAULT ',',
    tool_result_tokens BIGINT,
    returned_tokens BIGINT
);
CREATE INDEX executions_container ON executions (container_id, number);
CREATE INDEX executions_started ON executions (started_at);
