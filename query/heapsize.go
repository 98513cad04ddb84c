package query

import (
	"database/sql"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// The Go-side state of a store, accounted in bytes against the Go share of the memory
// budget (issue 11, bounded memory): every per-store structure a route file keeps in
// store.ext (the serving hour's boards, the tape index, the label cascade, the token
// symbols, the byte-bounded caches) is walked and its reachable heap estimated, so
// /debug-style reports and tests see what the Go side holds beside DuckDB.

// StateUse is one per-store structure and the heap it holds.
type StateUse struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// GoStateReport lists the store's per-store Go structures (by their key type in
// store.ext) with an estimate of the heap each reaches, largest first, and the byte
// bounded caches of the registry (CacheReport) are included in their owners' bytes.
func (q *Queries) GoStateReport() []StateUse {
	var out []StateUse
	q.ext.Range(func(k, v any) bool {
		w := sizeWalker{seen: map[uintptr]bool{}}
		out = append(out, StateUse{Name: strings.TrimPrefix(fmt.Sprintf("%T", k), "query."), Bytes: w.size(reflect.ValueOf(v))})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		return out[i].Bytes > out[j].Bytes || (out[i].Bytes == out[j].Bytes && out[i].Name < out[j].Name)
	})
	return out
}

// GoStateBytes is the sum of GoStateReport.
func (q *Queries) GoStateBytes() int64 {
	var n int64
	for _, u := range q.GoStateReport() {
		n += u.Bytes
	}
	return n
}

var (
	skipTypes = map[reflect.Type]bool{
		reflect.TypeFor[*sql.DB]():      true,
		reflect.TypeFor[*slog.Logger](): true,
		reflect.TypeFor[*Queries]():     true,
		reflect.TypeFor[*store]():       true,
	}
	syncMapType = reflect.TypeFor[sync.Map]()
)

// sizeWalker estimates the heap reachable from a value: each pointed-to object,
// slice backing array and string once (by address), maps at their entries' sizes
// plus an overhead per entry, through atomic.Pointer and sync.Map.
type sizeWalker struct{ seen map[uintptr]bool }

func (w *sizeWalker) once(p uintptr) bool {
	if p == 0 || w.seen[p] {
		return false
	}
	w.seen[p] = true
	return true
}

// size is the heap reachable from v, not counting v's own inline bytes.
func (w *sizeWalker) size(v reflect.Value) int64 {
	if !v.IsValid() || skipTypes[v.Type()] {
		return 0
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || !w.once(v.Pointer()) {
			return 0
		}
		e := v.Elem()
		return int64(e.Type().Size()) + w.size(e)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		n := w.size(e)
		if e.Kind() != reflect.Pointer && e.Type().Size() > 0 {
			n += int64(e.Type().Size()) // a non-pointer value boxed in the interface
		}
		return n
	case reflect.String:
		if v.Len() == 0 || !w.once(uintptr(unsafe.Pointer(unsafe.StringData(v.String())))) {
			return 0
		}
		return int64(v.Len())
	case reflect.Slice:
		if v.IsNil() || !w.once(v.Pointer()) {
			return 0
		}
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		if hasPointers(v.Type().Elem()) {
			for i := range v.Len() {
				n += w.size(v.Index(i))
			}
		}
		return n
	case reflect.Array:
		var n int64
		if hasPointers(v.Type().Elem()) {
			for i := range v.Len() {
				n += w.size(v.Index(i))
			}
		}
		return n
	case reflect.Map:
		if v.IsNil() || !w.once(v.Pointer()) {
			return 0
		}
		kt, vt := v.Type().Key(), v.Type().Elem()
		// Go's swiss maps: slots of key and value plus a control byte, at a load of
		// at most 7/8.
		n := int64(v.Len()) * (int64(kt.Size()+vt.Size()) + 1) * 8 / 7
		if hasPointers(kt) || hasPointers(vt) {
			it := v.MapRange()
			for it.Next() {
				n += w.size(it.Key()) + w.size(it.Value())
			}
		}
		return n
	case reflect.Struct:
		t := v.Type()
		if t == syncMapType && v.CanAddr() {
			m := (*sync.Map)(unsafe.Pointer(v.UnsafeAddr()))
			var n int64
			m.Range(func(k, val any) bool {
				n += 64 + w.size(reflect.ValueOf(k)) + w.size(reflect.ValueOf(val))
				return true
			})
			return n
		}
		if t.PkgPath() == "sync/atomic" && strings.HasPrefix(t.Name(), "Pointer[") && v.CanAddr() {
			// atomic.Pointer[T]{_ [0]*T; _ noCopy; v unsafe.Pointer}: follow v as a *T.
			pt := t.Field(0).Type.Elem()
			p := *(*unsafe.Pointer)(unsafe.Pointer(v.Field(t.NumField() - 1).UnsafeAddr()))
			return w.size(reflect.NewAt(pt.Elem(), p))
		}
		var n int64
		for i := range v.NumField() {
			if hasPointers(t.Field(i).Type) {
				n += w.size(v.Field(i))
			}
		}
		return n
	}
	return 0
}

// hasPointers reports whether a value of t can reach heap memory.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Chan, reflect.Func:
		return false
	}
	return true
}
