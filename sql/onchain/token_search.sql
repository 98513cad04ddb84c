-- OnchainTokenSearch resolves a symbol or name to tokens: an exact symbol match first
-- (case-insensitive), then symbols starting with the text, then names containing it;
-- within a tier by chain (ethereum, bsc, base) and symbol.
-- $1 text, $2 chain (ethereum, bsc, base or all), $3 row count.
SELECT chain, token_address, symbol, name, decimals, logo_url
FROM (
    SELECT *,
           CASE WHEN lower(symbol) = lower($1) THEN 0
                WHEN starts_with(lower(symbol), lower($1)) THEN 1
                ELSE 2 END AS tier
    FROM onchain_tokens
    WHERE ($2 = 'all' OR chain = $2)
      AND (starts_with(lower(symbol), lower($1)) OR contains(lower(name), lower($1)))
)
ORDER BY tier, CASE chain WHEN 'ethereum' THEN 0 WHEN 'bsc' THEN 1 ELSE 2 END, symbol, token_address
LIMIT $3;
