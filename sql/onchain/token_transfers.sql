-- OnchainTokenTransfers ranks the wallets that moved one token in a period: bought is
-- every inbound transfer, sold every outbound one (round trips count in both), USD at
-- transfer time. Only wallets with something on the ranked side are listed. Reads the
-- token-ordered copy of the in-memory legs (one per side of each transfer).
-- $1 token address, $2 chain (ethereum, bsc, base or all), $3 since (epoch us,
-- exclusive), $4 until (epoch us, inclusive), $5 tab (bought or sold), $6 row count.
WITH targets AS (
    -- One chain: the address itself. chain=all: the token's contract on each chain,
    -- linked by asset_id; an address the metadata does not know is read on every chain.
    SELECT $2 AS chain, $1 AS token WHERE $2 <> 'all'
    UNION
    SELECT t.chain, t.token_address
    FROM onchain_tokens_mem t JOIN onchain_tokens_mem s ON s.asset_id = t.asset_id
    WHERE $2 = 'all' AND s.token_address = $1
    UNION
    SELECT c.chain, $1 FROM (VALUES ('ethereum'), ('bsc'), ('base')) c(chain)
    WHERE $2 = 'all' AND NOT EXISTS (SELECT 1 FROM onchain_tokens_mem WHERE token_address = $1)
),
agg AS (
    SELECT l.wallet AS address,
           coalesce(sum(l.amount) FILTER (WHERE l.dir = 1), 0) AS bought,
           coalesce(sum(l.amount) FILTER (WHERE l.dir = -1), 0) AS sold,
           coalesce(sum(l.usd) FILTER (WHERE l.dir = 1), 0) AS usd_spent,
           coalesce(sum(l.usd) FILTER (WHERE l.dir = -1), 0) AS usd_received,
           list_sort(list(DISTINCT l.chain)) AS chains
    FROM onchain_legs_by_token l
    SEMI JOIN targets g ON g.chain = l.chain AND g.token = l.token
    WHERE l.block_time > make_timestamp($3) AND l.block_time <= make_timestamp($4)
      AND l.wallet <> '0x0000000000000000000000000000000000000000'
      AND $1 <> '0x0000000000000000000000000000000000000000'
    GROUP BY l.wallet
),
top AS (
    SELECT * FROM agg
    WHERE (CASE WHEN $5 = 'bought' THEN bought ELSE sold END) > 0
    ORDER BY (CASE WHEN $5 = 'bought' THEN bought ELSE sold END) DESC, address
    LIMIT $6
)
SELECT top.address, top.bought::DOUBLE, top.sold::DOUBLE, top.usd_spent::DOUBLE, top.usd_received::DOUBLE,
       array_to_string(top.chains, ','), lab.entity
FROM top LEFT JOIN onchain_labels_at(make_timestamp($4)) lab USING (address) -- labels observed by then
ORDER BY (CASE WHEN $5 = 'bought' THEN top.bought ELSE top.sold END) DESC, top.address;
