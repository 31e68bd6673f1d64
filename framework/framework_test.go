package framework

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func init() {
	Register("test.double", func(x any) any { return x.(int64) * 2 })
	Register("test.mod", func(arg any) MapFunc {
		m := arg.(int64)
		return func(x any) any { return KV{Key: x.(int64) % m, Value: x} }
	})
	Register("test.sum", func(a, b any) any { return a.(int64) + b.(int64) })
	Register("test.even", func(x any) bool { return x.(int64)%2 == 0 })
	Register("test.boom", func(x any) any { panic("boom") })
	Register("test.words", func(line []byte, emit func([]byte, int64)) {
		for _, w := range strings.Fields(string(line)) {
			emit([]byte(w), 1)
		}
	})
	Register("test.sum64", func(a, b int64) int64 { return a + b })
}

func TestCodecRoundTrip(t *testing.T) {
	recs := []any{nil, "héllo", int64(-5), 7, 3.5, true, KV{"k", []any{int64(1), []float64{1, 2}}}, []any{}}
	b, err := EncodeRecords(recs...)
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	if err := decodeAll(b, func(v any) { got = append(got, v) }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Fatalf("round trip: %#v, want %#v", got, recs)
	}
	if _, err := EncodeRecords(struct{}{}); err == nil {
		t.Fatal("unsupported type encoded")
	}
}

func TestLocalJobs(t *testing.T) {
	ctx, err := NewContext(Config{App: "test", Local: true, Executors: 2, Cores: 2, EventLogDir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close(nil)
	text := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(text, []byte("b a\r\nc a\n\nb a a\nc"), 0o644); err != nil {
		t.Fatal(err)
	}
	counts := []any{KV{"a", int64(4)}, KV{"b", int64(2)}, KV{"c", int64(2)}}
	cases := []struct {
		name string
		run  func() (any, error)
		want any
	}{
		{"map+filter count", func() (any, error) { return ctx.Range(100, 7).Map("test.double").Filter("test.even").Count() }, int64(100)},
		{"reduceByKey", func() (any, error) {
			r, err := ctx.Range(10, 3).Map("test.mod", int64(3)).ReduceByKey("test.sum", 2).SortByKey(2).Collect()
			return r, err
		}, []any{KV{int64(0), int64(18)}, KV{int64(1), int64(12)}, KV{int64(2), int64(15)}}},
		{"join", func() (any, error) {
			a := ctx.Parallelize([]any{KV{"a", int64(1)}, KV{"b", int64(2)}}, 2)
			b := ctx.Parallelize([]any{KV{"a", "x"}, KV{"c", "y"}}, 1)
			return a.Join(b, 2).Collect()
		}, []any{KV{"a", []any{int64(1), "x"}}}},
		// The bytes fast path (PairsFunc into an Int64ReduceFunc combiner)
		// and the generic paths must count alike.
		{"pairs fast combine", func() (any, error) {
			return ctx.TextFile(text, 3).FlatMap("test.words").ReduceByKey("test.sum64", 2).SortByKey(2).Collect()
		}, counts},
		{"pairs generic combine", func() (any, error) {
			return ctx.TextFile(text, 3).FlatMap("test.words").ReduceByKey("test.sum", 2).SortByKey(2).Collect()
		}, counts},
		{"int64 reduce over int64 keys", func() (any, error) {
			return ctx.Range(10, 3).Map("test.mod", int64(3)).ReduceByKey("test.sum64", 2).SortByKey(2).Collect()
		}, []any{KV{int64(0), int64(18)}, KV{int64(1), int64(12)}, KV{int64(2), int64(15)}}},
		{"pairs over strings, cached", func() (any, error) {
			lines := ctx.Parallelize([]any{"b a", "c a", "", "b a a", "c"}, 2).Cache()
			return lines.FlatMap("test.words").ReduceByKey("test.sum64", 1).SortByKey(1).Collect()
		}, counts},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.run()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBadJobsSayWhatToFix(t *testing.T) {
	ctx, err := NewContext(Config{App: "test", Local: true, Executors: 1, EventLogDir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close(nil)
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"unregistered function", func() error { _, err := ctx.Range(3, 1).Map("nope").Count(); return err }, `function "nope" is not registered: call framework.Register`},
		{"wrong shape", func() error { _, err := ctx.Range(3, 1).Filter("test.double").Count(); return err }, "is a map function"},
		{"missing input", func() error { _, err := ctx.TextFile("/nonexistent/in.txt", 1).Count(); return err }, "check the path"},
		{"task keeps failing", func() error { _, err := ctx.Range(3, 1).Map("test.boom").Count(); return err }, "failed 4 times; last error: function \"test.boom\" panicked: boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
