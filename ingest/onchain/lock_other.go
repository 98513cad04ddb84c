//go:build !unix

package onchain

import "sync"

// Without flock, the on-chain write lock serialises the writers of this process only.
var lakeMu sync.Mutex

func lockLake(string) (func(), error) {
	lakeMu.Lock()
	return lakeMu.Unlock, nil
}
