package archive_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"mdq/archive"
	"mdq/lake"
)

// TestRefreshSkipsCorruptFile: a file that is not Parquet is left out of the manifest
// (listed under skipped) while every other file, old and new, is listed with its
// current size and hash; repairing it lists it again.
func TestRefreshSkipsCorruptFile(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	Fixture(t, data, 200)
	dir := archive.Root(data)
	if err := archive.Refresh(ctx, data); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "venue=perpdex", "date=2026-11-18", "trades.parquet")
	good, _ := os.ReadFile(bad)
	if err := os.WriteFile(bad, []byte("PAR1 not parquet at all PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, _ := lake.NewWriter(data)
	if _, err := w.Write(ctx, lake.PerpdexTrades, []string{"2026-11-20"}, func(add lake.AppendFunc) error {
		return add("ETH", int64(1), int64(2), int64(3), "A", 1.0, 1.0, "0x", int64(1), "0x", "0x")
	}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if wrote, err := archive.RefreshDir(ctx, dir); err != nil || !wrote {
		t.Fatalf("refresh with a corrupt file: wrote=%v err=%v", wrote, err)
	}
	m, err := archive.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]archive.Entry{}
	for _, e := range m.Files {
		paths[e.Path] = e
	}
	if _, listed := paths["venue=perpdex/date=2026-11-18/trades.parquet"]; listed {
		t.Fatal("the corrupt file is listed")
	}
	if e, ok := paths["venue=perpdex/date=2026-11-20/trades.parquet"]; !ok || e.Rows != 1 {
		t.Fatalf("the new file is not listed: %+v", m.Files)
	}
	if len(m.Skipped) != 1 || m.Skipped[0].Path != "venue=perpdex/date=2026-11-18/trades.parquet" {
		t.Fatalf("skipped %+v", m.Skipped)
	}
	if wrote, err := archive.RefreshDir(ctx, dir); err != nil || wrote {
		t.Fatalf("an unchanged archive with a skipped file was rewritten: %v %v", wrote, err)
	}
	if err := os.WriteFile(bad, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if wrote, err := archive.RefreshDir(ctx, dir); err != nil || !wrote {
		t.Fatalf("repair not picked up: %v %v", wrote, err)
	}
	m, _ = archive.ReadManifest(dir)
	if len(m.Skipped) != 0 || len(m.Files) != 4 {
		t.Fatalf("after repair: %d files, skipped %+v", len(m.Files), m.Skipped)
	}
}

// TestSamplesFromNewestCompleteDay: the sample of a stream comes from the newest day
// before the venue's last (partial) day that holds rows, never an empty partial day.
func TestSamplesFromNewestCompleteDay(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	Fixture(t, data, 200) // perpdex trades on 11-18 and 11-19, book events on 11-19
	w, _ := lake.NewWriter(data)
	empty := func(add lake.AppendFunc) error { return nil }
	for _, tc := range []struct {
		table *lake.Table
		day   string
	}{{lake.PerpdexTrades, "2026-11-20"}, {lake.PerpdexBookEvents, "2026-11-20"}} {
		if _, err := w.Write(ctx, tc.table, []string{tc.day}, empty); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if err := archive.Refresh(ctx, data); err != nil {
		t.Fatal(err)
	}
	m, _ := archive.ReadManifest(archive.Root(data))
	want := map[string]string{
		"trades":      "venue=perpdex/date=2026-11-19/trades.parquet",
		"book_events": "venue=perpdex/date=2026-11-19/book_events.parquet",
	}
	if len(m.Samples) != len(want) {
		t.Fatalf("samples %+v", m.Samples)
	}
	for _, s := range m.Samples {
		if s.Source != want[s.Stream] || s.Rows == 0 {
			t.Errorf("sample of %s from %s with %d rows, want %s", s.Stream, s.Source, s.Rows, want[s.Stream])
		}
	}
}

// TestArchiveErrorsAreJSONAndSamplesHoldNoLinks: a 404 body is valid JSON whatever
// bytes the path holds; a symlink under samples/ pointing at a keyed file of the
// archive (inside the root, so os.Root allows it) is not served.
func TestArchiveErrorsAreJSONAndSamplesHoldNoLinks(t *testing.T) {
	data := t.TempDir()
	Fixture(t, data, 10)
	dir := archive.Root(data)
	if err := os.MkdirAll(filepath.Join(dir, "samples", "venue=perpdex"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Relative links that stay inside the archive root, which os.Root follows.
	if err := os.Symlink("../../venue=perpdex/date=2026-11-19/trades.parquet", filepath.Join(dir, "samples", "venue=perpdex", "all.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../venue=perpdex", filepath.Join(dir, "samples", "dirlink")); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, dir)
	for _, p := range []string{
		"/archive/samples/venue=perpdex/all.parquet",
		"/archive/samples/dirlink/date=2026-11-19/trades.parquet",
		"/archive/venue=perpdex/%01%7f%ff.parquet",
	} {
		resp, body := get(t, srv.URL+p, nil)
		var e map[string]string
		if resp.StatusCode != 404 || json.Unmarshal(body, &e) != nil || e["error"] == "" {
			t.Errorf("%s: %d %.200q, want 404 with a JSON error", p, resp.StatusCode, body)
		}
	}
}
