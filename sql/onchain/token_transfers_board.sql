-- OnchainTokenTransfers, one chain: the hourly transfers board of (chain, period), the
-- ranking of token_transfers.sql for every token and both tabs at once: per token and
-- tab, the first $4 wallets by whole tokens on that side (ties on address), with the
-- same figures and label. The zero address (the native coin) has no rows. Reads the
-- token-ordered copy of the in-memory legs.
-- $1 chain, $2 since (epoch us, exclusive), $3 until (epoch us, inclusive), $4 rows
-- per token and tab.
WITH agg AS (
    SELECT l.token, l.wallet AS address,
           coalesce(sum(l.amount) FILTER (WHERE l.dir = 1), 0) AS bought,
           coalesce(sum(l.amount) FILTER (WHERE l.dir = -1), 0) AS sold,
           coalesce(sum(l.usd) FILTER (WHERE l.dir = 1), 0) AS usd_spent,
           coalesce(sum(l.usd) FILTER (WHERE l.dir = -1), 0) AS usd_received
    FROM onchain_legs_by_token l
    WHERE l.chain = $1 AND l.block_time > make_timestamp($2) AND l.block_time <= make_timestamp($3)
      AND l.wallet <> '0x0000000000000000000000000000000000000000'
      AND l.token <> '0x0000000000000000000000000000000000000000'
    GROUP BY l.token, l.wallet
),
tabs AS (
    SELECT 'bought' AS tab, * FROM agg WHERE bought > 0
    QUALIFY row_number() OVER (PARTITION BY token ORDER BY bought DESC, address) <= $4
    UNION ALL
    SELECT 'sold', * FROM agg WHERE sold > 0
    QUALIFY row_number() OVER (PARTITION BY token ORDER BY sold DESC, address) <= $4
)
SELECT t.token, t.tab, t.address, t.bought::DOUBLE, t.sold::DOUBLE, t.usd_spent::DOUBLE, t.usd_received::DOUBLE,
       $1 AS chains, lab.entity
FROM tabs t LEFT JOIN onchain_labels_at(make_timestamp($3)) lab USING (address) -- labels observed by then
ORDER BY t.token, t.tab, (CASE WHEN t.tab = 'bought' THEN t.bought ELSE t.sold END) DESC, t.address;
