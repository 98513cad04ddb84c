-- OnchainTokenHolders ranks the wallets of each token on one chain by cumulative net
-- inflow in USD at transfer time (received minus sent, all history up to the board
-- hour), ties on address; with the current balance and the cascade label. It builds
-- the hourly holders board of the chain: every token's first $3 wallets, which
-- OnchainTokenHolders cuts to the request's limit. Reads the token-ordered copy of the
-- in-memory legs.
-- $1 chain, $2 until (epoch us, inclusive), $3 rows per token (the applied limit's cap).
WITH h AS (
    SELECT token, wallet AS address,
           coalesce(sum(usd) FILTER (WHERE dir = 1), 0) AS inflow,
           coalesce(sum(usd) FILTER (WHERE dir = -1), 0) AS outflow,
           coalesce(sum(amount) FILTER (WHERE dir = 1), 0) - coalesce(sum(amount) FILTER (WHERE dir = -1), 0) AS net_tokens,
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS tx_count,
           min(block_time) AS first_ts, max(block_time) AS last_ts
    FROM onchain_legs_by_token
    WHERE chain = $1 AND block_time <= make_timestamp($2)
      AND wallet <> '0x0000000000000000000000000000000000000000'
    GROUP BY token, wallet
    QUALIFY row_number() OVER (PARTITION BY token ORDER BY round(inflow, 2) - round(outflow, 2) DESC, address) <= $3
)
SELECT h.token, h.address, lab.entity, h.inflow::DOUBLE, h.outflow::DOUBLE, h.net_tokens::DOUBLE, bal.balance, h.tx_count, h.first_ts, h.last_ts
FROM h
LEFT JOIN (SELECT token_address AS token, address, balance FROM onchain_balances
           WHERE chain = $1 AND as_of <= make_timestamp($2)) bal USING (token, address) -- balances read by then
LEFT JOIN onchain_labels_at(make_timestamp($2)) lab USING (address) -- labels observed by then
ORDER BY h.token, round(h.inflow, 2) - round(h.outflow, 2) DESC, h.address;
