package api

import "testing"

func TestOmitEmpty(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":null,"b":[],"c":1}`, `{"c":1}`},
		{`{"a":{"x":null},"b":[{"y":[]},{"z":"s"}]}`, `{"a":{},"b":[{},{"z":"s"}]}`},
		{`{"n":12345678901234567890,"f":0.1,"t":true,"e":"\u003c\u0026"}`, `{"n":12345678901234567890,"f":0.1,"t":true,"e":"\u003c\u0026"}`},
		{`{"first":null,"second":2}`, `{"second":2}`},
		{`[null,1,[]]`, `[null,1,null]`},
		{`{}`, `{}`},
	} {
		got, err := OmitEmpty([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("OmitEmpty(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := OmitEmpty([]byte(`{"a":`)); err == nil {
		t.Error("truncated document accepted")
	}
}
