-- OnchainLabelsBatch returns, for each labelled address of the list, its cascade label
-- (the row of the source with the lowest priority number) and its Ethereum activity
-- over the 30 days ending now. Labels and activity always come from Ethereum. It builds
-- the hourly labels board (every labelled address); OnchainLabelsBatch looks its
-- addresses up in it.
-- $1 since (epoch us, exclusive), $2 until (epoch us, inclusive).
WITH lab AS (
    SELECT address, entity, wallet_type, confidence, risk_flag
    FROM onchain_labels_at(make_timestamp($2)) -- labels observed by then
),
act AS (
    SELECT wallet AS address,
           sum(usd) FILTER (WHERE dir = 1) AS inflow, sum(usd) FILTER (WHERE dir = -1) AS outflow,
           count(*) FILTER (WHERE NOT (self AND dir = -1)) AS tx, count(DISTINCT token) AS toks
    FROM onchain_legs
    WHERE wallet IN (SELECT address FROM lab) AND chain = 'ethereum'
      AND block_time > make_timestamp($1) AND block_time <= make_timestamp($2)
    GROUP BY wallet
)
SELECT lab.address, lab.entity, lab.wallet_type, lab.confidence, lab.risk_flag,
       coalesce(act.inflow, 0)::DOUBLE, coalesce(act.outflow, 0)::DOUBLE, coalesce(act.tx, 0), coalesce(act.toks, 0)
FROM lab LEFT JOIN act USING (address);
