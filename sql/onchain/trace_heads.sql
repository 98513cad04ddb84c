-- What OnchainTrace's hops can read of a published pair board (sql/onchain/trace_pairs.sql's
-- result: rows grouped by wallet, each wallet's pairs in rank order, pair volume
-- largest first): the head of each wallet's ranking, its first `width` pairs. A hop
-- takes the first pairs of a wallet that clear its floor, never more than the widest
-- width, and volumes only fall along a ranking, so that is always a prefix of the head.
-- File order is kept (it is the ranking; the volumes cast to DOUBLE may tie where the
-- exact sums did not). trace_pairs.sql publishes boards already cut to OnchainTraceMaxWidth
-- pairs a wallet, so with that width this keeps every row; boards published before it
-- did (every pair of the window) are cut here.
-- A wallet's rows are contiguous (the board is written ordered by wallet), so its head
-- is the rows less than `width` after its first row: the first rows are found by one
-- grouping of the wallet column (80 k wallets on a large chain) and joined back, where
-- a window over the whole board (3.4 M pairs of a large chain) held every row in
-- DuckDB's memory at once (770 MB against 290 MB of peak RSS, same rows).
-- $1 the board file, $2 the widest width.
WITH s AS (
    SELECT wallet, min(file_row_number) AS first
    FROM read_parquet($1, hive_partitioning = false, file_row_number = true)
    GROUP BY wallet
)
SELECT f.wallet, f.counterparty, f.out_usd, f.in_usd, f.tx_count, f.volume
FROM read_parquet($1, hive_partitioning = false, file_row_number = true) f
JOIN s ON f.wallet = s.wallet AND f.file_row_number < s.first + $2
ORDER BY f.file_row_number;
