-- PublishOnchainLegs: the token-ordered copy of one legs partition just written (read
-- back from its file, so both tables come from the same rows). $1 chain, $2 date.
SELECT token, wallet, dir, amount, usd, self, block_time
FROM onchain_legs WHERE chain = $1 AND date = CAST($2 AS DATE)
