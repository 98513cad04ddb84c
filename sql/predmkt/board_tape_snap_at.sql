-- /orderbook (query/predmkt_board_tape.go tapeSnapshot): per published snapshot digest
-- file (predmkt_tape_snaps, rows sorted by token then (ts, local_ts, seq)), the last row
-- of the token with ts at or before the request's: the digest's row order breaks ties,
-- as the in-memory index took the last of its sorted run. Reads only the row groups of
-- the token (min/max statistics on token_id).
-- $1 the digest files (VARCHAR[]), $2 token, $3 ts (epoch ms, inclusive).
SELECT filename, ts, local_ts, seq, "row"
FROM read_parquet($1, filename = true, file_row_number = true, hive_partitioning = false)
WHERE token_id = $2 AND ts <= $3
QUALIFY row_number() OVER (PARTITION BY filename ORDER BY ts DESC, local_ts DESC, seq DESC, file_row_number DESC) = 1;
