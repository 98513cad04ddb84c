-- PerpdexWalletPortfolio returns one wallet's account value and PnL per time bucket:
-- the bucket's last account snapshot, and closed PnL minus fees plus funding of the
-- fills and payments inside it. Buckets without either are absent (the caller fills
-- them). $1 wallet, $2 start, $3 end (both inclusive), $4 bucket width in ms.
WITH f AS (
    SELECT time, closed_pnl - fee AS pnl FROM perpdex_fills
    WHERE wallet = $1 AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
    UNION ALL
    SELECT time, usdc FROM perpdex_funding
    WHERE wallet = $1 AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
), fb AS (
    SELECT (epoch_ms(time) // $4) * $4 AS b, sum(pnl) AS pnl FROM f GROUP BY 1
), ab AS (
    SELECT (epoch_ms(snapshot_ts) // $4) * $4 AS b, arg_max(account_value, snapshot_ts) AS av
    FROM perpdex_accounts
    WHERE wallet = $1 AND snapshot_ts >= $2::TIMESTAMP AND snapshot_ts <= $3::TIMESTAMP
    GROUP BY 1
)
SELECT b, ab.av, coalesce(fb.pnl, 0)
FROM fb FULL JOIN ab USING (b)
ORDER BY b;
