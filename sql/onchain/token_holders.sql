-- OnchainTokenHolders ranks the wallets of one token on one chain by cumulative net
-- inflow in USD at transfer time (received minus sent, all history up to now), ties on
-- address; with the current balance and the cascade label. Reads the in-memory legs.
-- $1 chain, $2 token, $3 until (epoch us, inclusive), $4 row count.
WITH h AS (
    SELECT wallet AS address,
           coalesce(sum(usd) FILTER (WHERE dir = 1), 0) AS inflow,
           coalesce(sum(usd) FILTER (WHERE dir = -1), 0) AS outflow,
           coalesce(sum(amount) FILTER (WHERE dir = 1), 0) - coalesce(sum(amount) FILTER (WHERE dir = -1), 0) AS net_tokens,
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS tx_count,
           min(block_time) AS first_ts, max(block_time) AS last_ts
    FROM onchain_legs_mem
    WHERE chain = $1 AND token = $2 AND block_time <= make_timestamp($3)
      AND wallet <> '0x0000000000000000000000000000000000000000'
    GROUP BY wallet
    ORDER BY round(inflow, 2) - round(outflow, 2) DESC, address
    LIMIT $4
)
SELECT h.address, lab.entity, h.inflow::DOUBLE, h.outflow::DOUBLE, h.net_tokens::DOUBLE, bal.balance, h.tx_count, h.first_ts, h.last_ts
FROM h
LEFT JOIN (SELECT address, balance FROM onchain_balances WHERE chain = $1 AND token_address = $2) bal USING (address)
LEFT JOIN onchain_labels_mem lab USING (address)
ORDER BY round(h.inflow, 2) - round(h.outflow, 2) DESC, h.address;
