-- PerpdexFillsDaily: one fills date's per-wallet partial sums for the perpetuals boards
-- (lake perpdex_fills_daily; sql/perpdex/board.sql adds them up over the complete days
-- of a window). $1 the date. Sums of exact decimals (each fill's value rounded to 1e-10
-- first): a board adding days gets the bits a sum over the fills gets.
SELECT wallet,
       CAST(time AS DATE)                        AS day,
       sum(CAST(closed_pnl AS DECIMAL(38, 10)))  AS realized_x,
       sum(CAST(fee AS DECIMAL(38, 10)))         AS fee_x,
       sum(CAST(px * sz AS DECIMAL(38, 10)))     AS volume_x,
       count(*)                                  AS fills
FROM perpdex_fills
WHERE date = $1::DATE
GROUP BY wallet, day
