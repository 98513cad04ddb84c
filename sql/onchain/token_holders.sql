-- OnchainTokenHolders ranks the wallets of each token on one chain by cumulative net
-- inflow in USD at transfer time (received minus sent, all history up to the board
-- hour), ties on address; with the current balance and the cascade label. It builds
-- the hourly holders board of the chain: every token's first $3 wallets, which
-- OnchainTokenHolders cuts to the request's limit.
-- History from the wallet bands, as discover_all.sql reads it: on a board hour of the
-- serving date of the published onchain_wallet_bands, the whole days up to the
-- version's newest legs date R come summed per (token, wallet) over every band and
-- ranked per token in this board's order from onchain_holders_base, the edge days up
-- to R from onchain_wallet_edges and the legs dated after R from onchain_legs_by_token
-- (the token-ordered copy of the legs). Without them the base and edges are empty files
-- and R is 0001-01-01: every leg from onchain_legs_by_token. The sums are exact DECIMAL
-- sums of the same legs either way.
-- Only the pairs the legs touch ("touched") change from the base. A token's head is
-- among its touched pairs and its first $3 untouched ones, which are the base's rows up
-- to the $3-th untouched one: its rank is $3 + m, m the touched rows before it. The
-- touched rows' base ranks t_1 < t_2 < ... leave t_j - j untouched rows before t_j,
-- which grows with j, so m counts the j with t_j - j < $3. And a touched pair ranks
-- after that row unless its figure is at least that row's (the lowest of the untouched
-- head's), so only those are ranked with the head. The base is read for the touched
-- rows and each token's head, not grouped again whole.
-- $1 chain, $2 until (epoch us, inclusive), $3 rows per token (the applied limit's cap),
-- $4 R, $5 the chain's onchain_wallet_edges files, $6 its onchain_holders_base file.
WITH legs AS (
    SELECT token, wallet, block_time, dir, amount, usd, self
    FROM read_parquet($5, hive_partitioning = false)
    WHERE block_time <= make_timestamp($2)
    UNION ALL
    SELECT token, wallet, block_time, dir, amount, usd, self
    FROM onchain_legs_by_token
    WHERE chain = $1 AND date > CAST($4 AS DATE) AND block_time <= make_timestamp($2)
),
d AS (
    -- the legs summed per touched pair
    SELECT token, wallet AS address,
           sum(usd) FILTER (WHERE dir = 1) AS i, sum(usd) FILTER (WHERE dir = -1) AS o,
           sum(amount) FILTER (WHERE dir = 1) AS ai, sum(amount) FILTER (WHERE dir = -1) AS ao,
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS n, min(block_time) AS f, max(block_time) AS l
    FROM legs
    WHERE wallet <> '0x0000000000000000000000000000000000000000'
    GROUP BY token, wallet
),
base AS (
    SELECT token, wallet AS address, rank, inflow AS i, outflow AS o, amount_in AS ai, amount_out AS ao,
           tx_count AS n, first_time AS f, last_time AS l
    FROM read_parquet($6, hive_partitioning = false)
),
tb AS (
    -- the touched pairs' base rows
    SELECT * FROM base SEMI JOIN d USING (token, address)
),
m AS (
    SELECT token, count(*) FILTER (WHERE rank - j < $3) AS m
    FROM (SELECT token, rank, row_number() OVER (PARTITION BY token ORDER BY rank) AS j FROM tb)
    GROUP BY token
),
head AS (
    -- each token's untouched pairs up to its $3-th
    SELECT * FROM (SELECT b.* FROM base b LEFT JOIN m USING (token) WHERE b.rank <= $3 + coalesce(m.m, 0)) x
    ANTI JOIN d USING (token, address)
),
thr AS (
    SELECT token, min(round(coalesce(i, 0), 2) - round(coalesce(o, 0), 2)) AS key, count(*) AS untouched
    FROM head GROUP BY token
),
touched AS (
    -- a touched pair's legs added to its base row (both are one row per pair; a sum of
    -- none is NULL, as in a grouping)
    SELECT d.token, d.address,
           CASE WHEN x.i IS NULL THEN d.i WHEN d.i IS NULL THEN x.i ELSE x.i + d.i END AS i,
           CASE WHEN x.o IS NULL THEN d.o WHEN d.o IS NULL THEN x.o ELSE x.o + d.o END AS o,
           CASE WHEN x.ai IS NULL THEN d.ai WHEN d.ai IS NULL THEN x.ai ELSE x.ai + d.ai END AS ai,
           CASE WHEN x.ao IS NULL THEN d.ao WHEN d.ao IS NULL THEN x.ao ELSE x.ao + d.ao END AS ao,
           coalesce(x.n, 0) + d.n AS n, least(x.f, d.f) AS f, greatest(x.l, d.l) AS l
    FROM d LEFT JOIN tb x USING (token, address)
),
h AS (
    SELECT token, address, coalesce(i, 0) AS inflow, coalesce(o, 0) AS outflow,
           coalesce(ai, 0) - coalesce(ao, 0) AS net_tokens, n::BIGINT AS tx_count, f AS first_ts, l AS last_ts
    FROM (
        SELECT token, address, i, o, ai, ao, n, f, l FROM head
        UNION ALL
        SELECT t.token, t.address, t.i, t.o, t.ai, t.ao, t.n, t.f, t.l
        FROM touched t LEFT JOIN thr USING (token)
        WHERE thr.untouched IS NULL OR thr.untouched < $3
           OR round(coalesce(t.i, 0), 2) - round(coalesce(t.o, 0), 2) >= thr.key
    )
    QUALIFY row_number() OVER (PARTITION BY token ORDER BY round(inflow, 2) - round(outflow, 2) DESC, address) <= $3
)
SELECT h.token, h.address, lab.entity, h.inflow::DOUBLE, h.outflow::DOUBLE, h.net_tokens::DOUBLE, bal.balance, h.tx_count, h.first_ts, h.last_ts
FROM h
LEFT JOIN (SELECT token_address AS token, address, balance FROM onchain_balances
           WHERE chain = $1 AND as_of <= make_timestamp($2)) bal USING (token, address) -- balances read by then
LEFT JOIN onchain_labels_at(make_timestamp($2)) lab USING (address) -- labels observed by then
ORDER BY h.token, round(h.inflow, 2) - round(h.outflow, 2) DESC, h.address;
