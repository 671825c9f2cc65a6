package shim_test

// rustBatVectors are the 33 argument vectors of Rust's
// tests/ui/std/windows-bat-args.rs, in order (the two Rust expects refused,
// "\n" and "\r", included).
var rustBatVectors = [][]string{
	{"a", "b"},
	{"c is for cat", "d is for dog"},
	{"\"", " \""},
	{"\\", "\\"},
	{">file.txt"},
	{"whoami.exe"},
	{"&a.exe"},
	{"&echo hello "},
	{"&echo hello", "&whoami", ">file.txt"},
	{"!TMP!"},
	{"key=value"},
	{"\"key=value\""},
	{"key = value"},
	{"key=[\"value\"]"},
	{"", "a=b"},
	{"key=\"foo bar\""},
	{"key=[\"my_value]"},
	{"key=[\"my_value\",\"other-value\"]"},
	{"key\\=value"},
	{"key=\"&whoami\""},
	{"key=\"value\"=5"},
	{"key=[\">file.txt\"]"},
	{"\n"},
	{"\r"},
	{"%hello"},
	{"%PATH%"},
	{"%%cd:~,%"},
	{"%PATH%PATH%"},
	{"\">file.txt"},
	{"abc\"&echo hello"},
	{"123\">file.txt"},
	{"\"&echo hello&whoami.exe"},
	{`hello^"world`, "hello &echo oh no >file.txt"},
}

// extraBatVectors are arguments cursorkit passes in practice, which must
// all go through.
var extraBatVectors = [][]string{
	{"--model", "claude-opus-4-8[context=1m,effort=high]"},
	{"-p", "--output-format", "stream-json", "--force"},
	{`C:\Users\A User\repo\`, `trailing\\`, `\\server\share`},
	{"a;b", "a,b", "x=y", "two words", "naïve", "日本語"},
	{"*", "?", "@", "#", "$HOME", "a/b:c"},
	{""},
	{"", "", ""},
}
