-- OnchainWalletENS lists the ENS names of an address, the primary (reverse) name first.
-- $1 address.
SELECT name, is_primary, registered_at
FROM onchain_ens
WHERE address = $1
ORDER BY is_primary DESC, registered_at, name;
