-- One hop of OnchainTrace, read per request from the published pair board of the hour
-- (sql/onchain/trace_pairs.sql's result: rows grouped by wallet in wallet order, each
-- wallet's pairs in rank order, pair volume largest first): for each wallet of the
-- frontier, its first `width` pairs whose volume clears the floor. Volumes only fall
-- along a wallet's ranking, so those are the first `width` rows of the wallet's run
-- that clear it, in file order. The file is sorted by wallet, so the row groups whose
-- wallet range holds no frontier wallet are skipped (DuckDB pushes the join's keys
-- into the scan).
-- $1 the board file, $2 the frontier (VARCHAR[]), $3 the floor (USD), $4 width.
SELECT wallet, counterparty, out_usd, in_usd, tx_count
FROM read_parquet($1, hive_partitioning = false, file_row_number = true)
WHERE wallet IN (SELECT unnest($2::VARCHAR[])) AND volume >= $3
QUALIFY row_number() OVER (PARTITION BY wallet ORDER BY file_row_number) <= $4
ORDER BY file_row_number;
