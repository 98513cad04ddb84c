-- OnchainDiscover is the wallet leaderboard of one chain over a rolling window. Only
-- wallets whose realized PnL could be computed are listed (pnl_available = 1): those
-- with at least one priced token both bought and sold in the window. Realized PnL
-- per token is min(bought, sold) times (average sell price minus average buy price),
-- summed over tokens as DECIMAL (no integer wraparound); tokens_profitable counts the
-- tokens whose figure is above zero. total is the size of that whole population.
-- Reads the in-memory legs. It builds the hourly discover board (the whole population,
-- unsorted): OnchainDiscover ranks and cuts it in Go. The sort keys come back as the
-- exact DECIMAL figures rounded to the cent, so ranking on them is ranking to the cent.
-- $1 chain, $2 since (epoch us, exclusive), $3 until (epoch us, inclusive).
WITH wt AS (
    SELECT wallet AS w, token,
           sum(amount) FILTER (WHERE dir = 1) AS b, sum(usd) FILTER (WHERE dir = 1) AS bu,
           sum(amount) FILTER (WHERE dir = -1) AS s, sum(usd) FILTER (WHERE dir = -1) AS su,
           bool_and(priced) AS priced,
           -- a self-transfer is one transfer: its sending leg does not count again
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS n
    FROM onchain_legs
    WHERE chain = $1 AND block_time > make_timestamp($2) AND block_time <= make_timestamp($3)
    GROUP BY wallet, token
),
pt AS (
    -- A token's PnL exists when it was bought and sold and is priced.
    SELECT *, CASE WHEN b > 0 AND s > 0 AND priced
                   THEN CAST(least(b, s) * (su / s - bu / b) AS DECIMAL(38, 6)) END AS pnl
    FROM wt
),
wallets AS (
    SELECT w AS address,
           coalesce(sum(bu), 0) AS inflow, coalesce(sum(su), 0) AS outflow,
           count(*) AS tokens_traded,
           count(*) FILTER (WHERE pnl > 0) AS tokens_profitable,
           sum(pnl) AS realized_pnl,
           sum(n) AS tx_count
    FROM pt GROUP BY w
    HAVING count(pnl) > 0
),
seen AS (
    SELECT wallet AS address, min(block_time) AS first_seen, max(block_time) AS last_active
    FROM onchain_legs
    WHERE chain = $1 AND block_time <= make_timestamp($3) AND wallet IN (SELECT address FROM wallets)
    GROUP BY wallet
)
SELECT p.address, p.inflow::DOUBLE, p.outflow::DOUBLE, p.tx_count::BIGINT, p.tokens_traded, p.tokens_profitable,
       s.first_seen, s.last_active, p.realized_pnl::DOUBLE,
       round(p.inflow, 2)::DOUBLE, round(p.outflow, 2)::DOUBLE, (round(p.inflow, 2) - round(p.outflow, 2))::DOUBLE,
       round(p.realized_pnl, 2)::DOUBLE, (round(p.inflow, 2) + round(p.outflow, 2))::DOUBLE
FROM wallets p JOIN seen s USING (address);
