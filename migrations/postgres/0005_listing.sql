-- One key's executions, newest first, walked in index order (the audit viewer's pages): no
-- sort of every row the key has.
CREATE INDEX executions_owner_started ON executions (owner, started_at, id);
