-- What OnchainTrace's hops can read of a published pair board (sql/onchain/trace_pairs.sql's
-- result: rows grouped by wallet, each wallet's pairs in rank order, pair volume
-- largest first): the head of each wallet's ranking, its first `width` pairs. A hop
-- takes the first pairs of a wallet that clear its floor, never more than the widest
-- width, and volumes only fall along a ranking, so that is always a prefix of the head.
-- File order is kept (it is the ranking; the volumes cast to DOUBLE may tie where the
-- exact sums did not).
-- $1 the board file, $2 the widest width.
SELECT wallet, counterparty, out_usd, in_usd, tx_count, volume
FROM read_parquet($1, hive_partitioning = false, file_row_number = true)
QUALIFY row_number() OVER (PARTITION BY wallet ORDER BY file_row_number) <= $2
ORDER BY file_row_number;
