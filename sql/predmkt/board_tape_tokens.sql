-- Tape index (tokens): the first outcome's token of each condition (yes_mid's token).
-- $1 the tokens file.
SELECT condition_id, token_id
FROM read_parquet($1)
WHERE outcome_index = 0;
