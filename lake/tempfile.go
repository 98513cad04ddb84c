package lake

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

// CreateTemp creates a new file in dir named prefix + a random suffix, like
// os.CreateTemp, but with mode 0666 minus the umask instead of 0600: the file is
// renamed into the lake and archive, which a web server or another user may have to
// read (0644 under the usual umask 022).
func CreateTemp(dir, prefix string) (*os.File, error) {
	for range 10000 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, prefix+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: os.ErrExist}
}

// MkdirTemp creates a new directory in dir named prefix + a random suffix, like
// os.MkdirTemp but with mode 0777 minus the umask, as CreateTemp does for files.
func MkdirTemp(dir, prefix string) (string, error) {
	for range 10000 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		name := filepath.Join(dir, prefix+hex.EncodeToString(b[:]))
		err := os.Mkdir(name, 0o777)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return name, err
	}
	return "", &os.PathError{Op: "mkdirtemp", Path: filepath.Join(dir, prefix+"*"), Err: os.ErrExist}
}
