package agentsim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

type command int

const (
	cmdPrint command = iota
	cmdVersion
	cmdStatus
	cmdModels
)

// invocation is a parsed cursor-agent command line.
type invocation struct {
	command             command
	print               bool
	outputFormat        string
	model               string
	mode                string // "", "plan" or "ask"
	force               bool
	trust               bool
	resume              string
	streamPartialOutput bool
	workspace           string
	jsonFormat          bool     // status/whoami --format json
	sandbox             string   // --sandbox: "", "enabled" or "disabled"
	allowedTools        []string // --allowed-tools, split at commas
	disableProject      bool     // --disable-project-configs
	singleTurn          bool     // --single-turn
	disableAutoUpdate   bool     // --disable-auto-update
	approveMCPs         bool     // --approve-mcps
}

// valueOptions take a value, either as the next argument or after "=".
var valueOptions = map[string]bool{
	"--output-format": true, "--model": true, "-m": true, "--mode": true,
	"--resume": true, "--workspace": true, "--format": true,
	"--sandbox": true, "--allowed-tools": true,
}

// choices are the options whose value is one of a list: their usage and
// choices as the real CLI's option parser names them.
var choices = map[string]struct {
	usage   string
	allowed []string
}{
	"--mode":    {"--mode <mode>", []string{"plan", "ask"}},
	"--format":  {"--format <format>", []string{"text", "json"}},
	"--sandbox": {"--sandbox <mode>", []string{"enabled", "disabled"}},
}

// parseArgs reads argv the way the real CLI's option parser does, strictly:
// unknown options and a positional prompt are errors, so tests notice an
// argv cursorkit should never build. On an error inv holds what was read
// before it.
func parseArgs(args []string) (inv invocation, err error) {
	positional, err := inv.readOptions(args)
	if err != nil || inv.command == cmdVersion {
		return inv, err
	}
	return inv, inv.readCommand(positional)
}

// readOptions applies args' options to inv and returns the positional
// arguments, those after "--" included.
func (inv *invocation) readOptions(args []string) ([]string, error) {
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(positional, args[i+1:]...), nil
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		name, value, hasValue := strings.Cut(arg, "=")
		switch {
		case valueOptions[name] && !hasValue:
			if i+1 >= len(args) {
				return nil, fmt.Errorf("option '%s' argument missing", name)
			}
			i++
			value = args[i]
		case !valueOptions[name] && hasValue:
			return nil, fmt.Errorf("option '%s' takes no argument", name)
		}
		if err := inv.set(name, value); err != nil {
			return nil, err
		}
	}
	return positional, nil
}

// set applies one option and its value.
func (inv *invocation) set(name, value string) error {
	if c, ok := choices[name]; ok && !slices.Contains(c.allowed, value) {
		return fmt.Errorf("option '%s' argument '%s' is invalid. Allowed choices are %s", c.usage, value, strings.Join(c.allowed, ", "))
	}
	switch name {
	case "--version", "-v":
		inv.command = cmdVersion
	case "--output-format":
		inv.outputFormat = value
	case "--model", "-m":
		inv.model = value
	case "--mode":
		inv.mode = value
	case "--resume":
		inv.resume = value
	case "--workspace":
		inv.workspace = value
	case "--format":
		inv.jsonFormat = value == "json"
	case "--sandbox":
		inv.sandbox = value
	case "--allowed-tools":
		tools, err := parseToolList(value)
		if err != nil {
			return err
		}
		inv.allowedTools = tools
	case "--list-models":
		return errors.New("--list-models is unreliable and unsupported by this simulator; use 'models'")
	default:
		flag, ok := inv.flags()[name]
		if !ok {
			return fmt.Errorf("unknown option '%s'", name)
		}
		*flag = true
	}
	return nil
}

// flags are the options without a value, by the field each sets.
func (inv *invocation) flags() map[string]*bool {
	return map[string]*bool{
		"--print": &inv.print, "-p": &inv.print, "--force": &inv.force, "-f": &inv.force, "--trust": &inv.trust,
		"--stream-partial-output": &inv.streamPartialOutput, "--disable-project-configs": &inv.disableProject,
		"--single-turn": &inv.singleTurn, "--disable-auto-update": &inv.disableAutoUpdate, "--approve-mcps": &inv.approveMCPs,
	}
}

// readCommand reads the command the positional arguments name (none: a
// print turn) and checks what a print turn requires.
func (inv *invocation) readCommand(positional []string) error {
	if len(positional) > 0 {
		switch positional[0] {
		case "status", "whoami":
			inv.command, positional = cmdStatus, positional[1:]
		case "models":
			inv.command, positional = cmdModels, positional[1:]
		}
	}
	switch {
	case len(positional) > 0 && inv.command == cmdPrint:
		return errors.New("a prompt in argv is refused: cursorkit must send it on stdin")
	case len(positional) > 0:
		return errors.New("too many arguments")
	case inv.command != cmdPrint:
		return nil
	case !inv.print:
		return errors.New("interactive mode is not simulated: pass --print")
	case inv.outputFormat != "stream-json":
		return fmt.Errorf("only --output-format stream-json is simulated, got %q", inv.outputFormat)
	}
	return nil
}

// parseToolList reads --allowed-tools: one comma-separated list of tool
// names (letters, digits and '_'), none empty. A repeated option replaces
// the earlier list, as the real CLI's option parser does for an option
// that is not variadic.
func parseToolList(value string) ([]string, error) {
	names := strings.Split(value, ",")
	for _, name := range names {
		ok := name != ""
		for _, c := range name {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
				ok = false
			}
		}
		if !ok {
			return nil, fmt.Errorf("option '--allowed-tools <tools>' argument '%s' is invalid. Expected a comma-separated list of tool names", value)
		}
	}
	return names, nil
}
