-- Tape index (markets): the market fields the smart-money rows carry, per condition.
-- $1 the markets file.
SELECT condition_id, question, slug, category
FROM read_parquet($1);
