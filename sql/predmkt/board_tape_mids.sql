-- Tape index (mids): per token, the last recorded mid of one archive book_events file,
-- with its (local_ts, seq), and the file-wide latest local_ts of a mid-carrying event.
-- Same definition as mids.sql: any event carrying both a best bid and a best ask.
-- $1 the file's path; $2 the clock (epoch ms, local_ts): rows after it are left out,
-- so the index is built with the largest BIGINT and queried again with the store
-- clock only for files holding mids recorded after it.
SELECT token_id, arg_max((best_bid + best_ask) / 2, (local_ts, seq)), max(local_ts),
       arg_max(seq, (local_ts, seq))
FROM read_parquet($1)
WHERE local_ts <= $2 AND best_bid > 0 AND best_ask > 0
GROUP BY token_id;
