package task_test

import "encoding/json/v2"

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
