package modelapi

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"encoding/json/v2"
)

func TestExplore(t *testing.T) {
	cli := os.Getenv("X_CLI")
	if cli == "" {
		t.Skip()
	}
	var script Script
	if err := json.Unmarshal([]byte(os.Getenv("X_SCRIPT")), &script); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	home := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha line one\nalpha line two\n"), 0o644)
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	os.WriteFile(filepath.Join(ws, "sub", "b.txt"), []byte("beta\n"), 0o644)
	exec.Command("git", "init", "-q", ws).Run()
	s, err := Start(script, map[string]string{"workspace": ws})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bin := "/work/main/.cache/realclis/linux/node_modules/.bin/" + cli
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home}
	var args []string
	switch cli {
	case "claude":
		env = append(env, "ANTHROPIC_BASE_URL="+s.URL(), "ANTHROPIC_API_KEY=sk-standin", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
		env = append(env, strings.Fields(os.Getenv("X_ENV"))...)
		args = strings.Fields(os.Getenv("X_ARGS"))
		if len(args) == 0 {
			args = []string{"-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "default", "--tools", "Read,Grep,Glob,LS"}
		}
	case "codex":
		os.Mkdir(filepath.Join(home, ".codex"), 0o755)
		cfg := fmt.Sprintf("model_provider = \"standin\"\n[model_providers.standin]\nname = \"standin\"\nbase_url = \"%s/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n%s\n", s.URL(), os.Getenv("X_CFG"))
		os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(cfg), 0o644)
		env = append(env, "CODEX_HOME="+filepath.Join(home, ".codex"), "OPENAI_API_KEY=sk-standin")
		env = append(env, strings.Fields(os.Getenv("X_ENV"))...)
		args = strings.Fields(os.Getenv("X_ARGS"))
		if len(args) == 0 {
			args = []string{"exec", "--json", "--color", "never", "--sandbox", "read-only", "-"}
		}
	case "gemini":
		os.Mkdir(filepath.Join(home, ".gemini"), 0o755)
		os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644)
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+s.URL(), "GEMINI_API_KEY=standin", "GEMINI_CLI_TRUST_WORKSPACE=true")
		env = append(env, strings.Fields(os.Getenv("X_ENV"))...)
		args = strings.Fields(os.Getenv("X_ARGS"))
		if len(args) == 0 {
			args = []string{"--output-format", "stream-json", "--skip-trust", "--approval-mode", "default", "-p", ""}
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, ws
	cmd.Stdin = strings.NewReader("Do the thing.\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	cmd.Start()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		err = <-done
	}
	fmt.Printf("== exit: %v after %s\n== stdout:\n%s\n== stderr:\n%s\n", err, time.Since(start), out.String(), errb.String())
	for _, r := range s.Requests() {
		fmt.Printf("== req %s %s %s model=%s reply=%d status=%d tools=%v results=%q\n", r.API, r.Method, r.Path, r.Model, r.Reply, r.Status, r.Tools, r.ToolResults)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
	fmt.Printf("== a.txt: %q\n", b)
}
