package perpdex

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"mdq/lake"
)

// flowEntry is one element of a userFunding or userNonFundingLedgerUpdates answer.
type flowEntry struct {
	Time  integer         `json:"time"`
	Hash  str             `json:"hash"`
	Delta json.RawMessage `json:"delta"`
	// fundingHistory (the venue's rates per coin, no user) has these instead.
	Coin        str `json:"coin"`
	FundingRate num `json:"fundingRate"`
	Premium     num `json:"premium"`
}

// parseFunding reads one userFunding element: a perpdex_funding row. An element of the
// venue's fundingHistory answer (a coin's hourly rate, no user and no payment) is a
// perpdex_funding_rates row (source history).
func parseFunding(b []byte, c *fileCtx, out *record) error {
	var e flowEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	if e.Delta == nil {
		if e.Coin.set && e.FundingRate.ok() && e.Time.set {
			at := time.UnixMilli(e.Time.v).UTC()
			out.add(lake.PerpdexFundingRates, at, at, e.Coin.v, "history", e.FundingRate.v, e.Premium.orNil())
			return nil
		}
		return errors.New("not a userFunding element: no delta")
	}
	var d struct {
		Type        str `json:"type"`
		Coin        str `json:"coin"`
		Usdc        num `json:"usdc"`
		Szi         num `json:"szi"`
		FundingRate num `json:"fundingRate"`
	}
	if err := json.Unmarshal(e.Delta, &d); err != nil {
		return fmt.Errorf("delta: %w", err)
	}
	if d.Type.v != "funding" {
		return fmt.Errorf("delta type %q: want funding", d.Type.v)
	}
	if err := missing("time", e.Time, "delta.coin", d.Coin, "delta.usdc", d.Usdc, "delta.szi", d.Szi,
		"delta.fundingRate", d.FundingRate); err != nil {
		return err
	}
	user, err := c.needUser()
	if err != nil {
		return err
	}
	at := time.UnixMilli(e.Time.v).UTC()
	out.add(lake.PerpdexFunding, at, at, user, d.Coin.v, d.Usdc.v, d.Szi.v, d.FundingRate.v)
	return nil
}

// ledgerDelta holds the fields of every ledger kind mdq maps.
type ledgerDelta struct {
	Type            str `json:"type"`
	Usdc            num `json:"usdc"`
	User            str `json:"user"`
	Destination     str `json:"destination"`
	Token           str `json:"token"`
	Amount          num `json:"amount"`
	UsdcValue       num `json:"usdcValue"`
	Vault           str `json:"vault"`
	NetWithdrawnUsd num `json:"netWithdrawnUsd"`
	SourceDex       str `json:"sourceDex"`
	DestinationDex  str `json:"destinationDex"`
}

// parseLedger reads one userNonFundingLedgerUpdates element. deposit and withdraw map
// onto themselves; internalTransfer, subAccountTransfer, and spotTransfer or send of
// USDC onto send_out (the wallet is the sender) or send_in (the destination), with the
// other side as counterparty; vaultDeposit is a send_out to the vault, vaultWithdraw a
// send_in from it (the net amount withdrawn). Every other kind (accountClassTransfer,
// liquidation, rewardsClaim, spotGenesis, staking, a send of another token, a kind
// the venue adds later) does not move perp USDC between accounts and is counted and
// skipped.
func parseLedger(b []byte, c *fileCtx, out *record) error {
	var e flowEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	if e.Delta == nil {
		return errors.New("not a ledger update: no delta")
	}
	var d ledgerDelta
	if err := json.Unmarshal(e.Delta, &d); err != nil {
		return fmt.Errorf("delta: %w", err)
	}
	if err := missing("time", e.Time, "hash", e.Hash, "delta.type", d.Type); err != nil {
		return err
	}
	user, err := c.needUser()
	if err != nil {
		return err
	}
	at := time.UnixMilli(e.Time.v).UTC()
	hash := strings.ToLower(e.Hash.v)
	row := func(kind string, amt float64, cp any) {
		out.add(lake.PerpdexLedger, at, at, user, kind, amt, cp, hash)
	}
	needUsdc := func() error { return missing("delta.usdc", d.Usdc) }
	switch d.Type.v {
	case "deposit", "withdraw":
		if err := needUsdc(); err != nil {
			return err
		}
		row(d.Type.v, d.Usdc.v, nil)
	case "internalTransfer", "subAccountTransfer", "spotTransfer", "send":
		amt := d.Usdc
		if !amt.ok() {
			if d.Token.set && d.Token.v != "USDC" {
				out.skip("ledger " + d.Type.v + " of " + d.Token.v)
				return nil
			}
			amt = d.Amount
		}
		if d.Type.v == "send" && (d.SourceDex.v != "" || d.DestinationDex.v != "") && d.SourceDex.v != d.DestinationDex.v {
			// Between dexes or spot and perp of one account: no counterparty account.
			out.skip("ledger send between dexes")
			return nil
		}
		if err := missing("delta.usdc (or amount)", amt, "delta.user", d.User, "delta.destination", d.Destination); err != nil {
			return err
		}
		from, to := lower(d.User.v), lower(d.Destination.v)
		switch user {
		case from:
			row("send_out", amt.v, to)
		case to:
			row("send_in", amt.v, from)
		default:
			return fmt.Errorf("%s between %s and %s does not involve %s", d.Type.v, from, to, user)
		}
	case "vaultDeposit":
		if err := missing("delta.usdc", d.Usdc, "delta.vault", d.Vault); err != nil {
			return err
		}
		row("send_out", d.Usdc.v, lower(d.Vault.v))
	case "vaultWithdraw":
		amt := d.NetWithdrawnUsd
		if !amt.ok() {
			amt = d.Usdc
		}
		if err := missing("delta.netWithdrawnUsd", amt, "delta.vault", d.Vault); err != nil {
			return err
		}
		row("send_in", amt.v, lower(d.Vault.v))
	default:
		out.skip("ledger kind " + d.Type.v)
	}
	return nil
}
