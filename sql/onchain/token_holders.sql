-- OnchainTokenHolders ranks the wallets of each token on one chain by cumulative net
-- inflow in USD at transfer time (received minus sent, all history up to the board
-- hour), ties on address; with the current balance and the cascade label. It builds
-- the hourly holders board of the chain: every token's first $3 wallets, which
-- OnchainTokenHolders cuts to the request's limit.
-- History from the wallet bands, as discover_all.sql reads it: on a board hour of the
-- serving date of the published onchain_wallet_bands, the whole days up to the recent
-- split R come summed per (wallet, token, band) from them, the edge days up to R from
-- onchain_wallet_edges and the legs dated after R from onchain_legs_by_token (the
-- token-ordered copy of the legs). Without them the bands and edges are empty files
-- and R is 0001-01-01: every leg from onchain_legs_by_token. The sums are exact DECIMAL
-- sums of the same legs either way.
-- $1 chain, $2 until (epoch us, inclusive), $3 rows per token (the applied limit's cap),
-- $4 R, $5 the chain's onchain_wallet_edges files, $6 its onchain_wallet_bands files.
WITH legs AS (
    SELECT token, wallet, block_time, dir, amount, usd, self
    FROM read_parquet($5, hive_partitioning = false)
    WHERE block_time <= make_timestamp($2)
    UNION ALL
    SELECT token, wallet, block_time, dir, amount, usd, self
    FROM onchain_legs_by_token
    WHERE chain = $1 AND date > CAST($4 AS DATE) AND block_time <= make_timestamp($2)
),
h AS (
    SELECT token, address,
           coalesce(sum(i), 0) AS inflow, coalesce(sum(o), 0) AS outflow,
           coalesce(sum(ai), 0) - coalesce(sum(ao), 0) AS net_tokens,
           sum(n)::BIGINT AS tx_count, min(f) AS first_ts, max(l) AS last_ts
    FROM (
        SELECT token, wallet AS address, inflow AS i, outflow AS o, amount_in AS ai, amount_out AS ao,
               tx_count AS n, first_time AS f, last_time AS l
        FROM read_parquet($6, hive_partitioning = false)
        UNION ALL
        SELECT token, wallet,
               sum(usd) FILTER (WHERE dir = 1), sum(usd) FILTER (WHERE dir = -1),
               sum(amount) FILTER (WHERE dir = 1), sum(amount) FILTER (WHERE dir = -1),
               count(*) FILTER (WHERE NOT (self AND dir = -1)), min(block_time), max(block_time)
        FROM legs
        GROUP BY token, wallet
    )
    WHERE address <> '0x0000000000000000000000000000000000000000'
    GROUP BY token, address
    QUALIFY row_number() OVER (PARTITION BY token ORDER BY round(inflow, 2) - round(outflow, 2) DESC, address) <= $3
)
SELECT h.token, h.address, lab.entity, h.inflow::DOUBLE, h.outflow::DOUBLE, h.net_tokens::DOUBLE, bal.balance, h.tx_count, h.first_ts, h.last_ts
FROM h
LEFT JOIN (SELECT token_address AS token, address, balance FROM onchain_balances
           WHERE chain = $1 AND as_of <= make_timestamp($2)) bal USING (token, address) -- balances read by then
LEFT JOIN onchain_labels_at(make_timestamp($2)) lab USING (address) -- labels observed by then
ORDER BY h.token, round(h.inflow, 2) - round(h.outflow, 2) DESC, h.address;
