-- Decisions on an execution's calls (",approved,denied,asked,"), for listings filtered by
-- them; the ledger in the audit chain holds each decision itself.
ALTER TABLE executions ADD COLUMN approvals TEXT NOT NULL DEFAULT '';
