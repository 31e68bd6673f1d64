package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// OmitEmpty rewrites the JSON document b without the object members whose
// value is null or an empty array, keeping everything else as it was (the
// members' order, numbers exactly as written). Mesos writes a protobuf
// message as JSON with only the fields that are set: an unset optional
// message and an empty repeated field are absent, where encoding/json
// writes mesos-go's types with "field":null or "field":[]. A client that
// tells absent from null (or expects an array where it finds null) sees
// Mesos's document after this.
func OmitEmpty(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(b))
	if _, err := omitValue(dec, &out); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("OmitEmpty: more than one JSON value")
	}
	return out.Bytes(), nil
}

// omitValue copies the next value of dec to out, unless it is null or an
// empty array: then it writes nothing and reports empty.
func omitValue(dec *json.Decoder, out *bytes.Buffer) (empty bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch v := tok.(type) {
	case nil:
		return true, nil
	case json.Delim:
		if v == '{' {
			return false, omitObject(dec, out)
		}
		return omitArray(dec, out)
	case json.Number:
		out.WriteString(v.String())
	case bool:
		fmt.Fprint(out, v)
	case string:
		s, _ := json.Marshal(v)
		out.Write(s)
	}
	return false, nil
}

// omitObject copies an object whose '{' was read, without its empty
// members.
func omitObject(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := json.Marshal(tok.(string))
		mark := out.Len()
		if !first {
			out.WriteByte(',')
		}
		out.Write(key)
		out.WriteByte(':')
		empty, err := omitValue(dec, out)
		if err != nil {
			return err
		}
		if empty {
			out.Truncate(mark)
			continue
		}
		first = false
	}
	_, err := dec.Token() // '}'
	out.WriteByte('}')
	return err
}

// omitArray copies an array whose '[' was read; a null element stays (it
// is not a field), and an empty array is reported empty.
func omitArray(dec *json.Decoder, out *bytes.Buffer) (bool, error) {
	mark := out.Len()
	out.WriteByte('[')
	n := 0
	for dec.More() {
		if n > 0 {
			out.WriteByte(',')
		}
		elem := out.Len()
		empty, err := omitValue(dec, out)
		if err != nil {
			return false, err
		}
		if empty && out.Len() == elem {
			out.WriteString("null")
		}
		n++
	}
	if _, err := dec.Token(); err != nil { // ']'
		return false, err
	}
	if n == 0 {
		out.Truncate(mark)
		return true, nil
	}
	out.WriteByte(']')
	return false, nil
}
