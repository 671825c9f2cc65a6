package agentsim

import (
	"fmt"
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

// parseArgs reads argv the way the real CLI's option parser does, strictly:
// unknown options and a positional prompt are errors, so tests notice an
// argv cursorkit should never build.
func parseArgs(args []string) (invocation, error) {
	var inv invocation
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		name, value, hasValue := strings.Cut(arg, "=")
		if valueOptions[name] {
			if !hasValue {
				if i+1 >= len(args) {
					return inv, fmt.Errorf("option '%s' argument missing", name)
				}
				i++
				value = args[i]
			}
		} else if hasValue {
			return inv, fmt.Errorf("option '%s' takes no argument", name)
		}
		switch name {
		case "--version", "-v":
			inv.command = cmdVersion
		case "--print", "-p":
			inv.print = true
		case "--output-format":
			inv.outputFormat = value
		case "--model", "-m":
			inv.model = value
		case "--mode":
			if value != "plan" && value != "ask" {
				return inv, fmt.Errorf("option '--mode <mode>' argument '%s' is invalid. Allowed choices are plan, ask", value)
			}
			inv.mode = value
		case "--force", "-f":
			inv.force = true
		case "--trust":
			inv.trust = true
		case "--resume":
			inv.resume = value
		case "--stream-partial-output":
			inv.streamPartialOutput = true
		case "--workspace":
			inv.workspace = value
		case "--format":
			if value != "json" && value != "text" {
				return inv, fmt.Errorf("option '--format <format>' argument '%s' is invalid. Allowed choices are text, json", value)
			}
			inv.jsonFormat = value == "json"
		case "--sandbox":
			if value != "enabled" && value != "disabled" {
				return inv, fmt.Errorf("option '--sandbox <mode>' argument '%s' is invalid. Allowed choices are enabled, disabled", value)
			}
			inv.sandbox = value
		case "--allowed-tools":
			tools, err := parseToolList(value)
			if err != nil {
				return inv, err
			}
			inv.allowedTools = tools
		case "--disable-project-configs":
			inv.disableProject = true
		case "--single-turn":
			inv.singleTurn = true
		case "--disable-auto-update":
			inv.disableAutoUpdate = true
		case "--approve-mcps":
			inv.approveMCPs = true
		case "--list-models":
			return inv, fmt.Errorf("--list-models is unreliable and unsupported by this simulator; use 'models'")
		default:
			return inv, fmt.Errorf("unknown option '%s'", name)
		}
	}
	if inv.command == cmdVersion {
		return inv, nil
	}
	if len(positional) > 0 {
		switch positional[0] {
		case "status", "whoami":
			inv.command = cmdStatus
			positional = positional[1:]
		case "models":
			inv.command = cmdModels
			positional = positional[1:]
		}
	}
	if len(positional) > 0 {
		if inv.command == cmdPrint {
			return inv, fmt.Errorf("a prompt in argv is refused: cursorkit must send it on stdin")
		}
		return inv, fmt.Errorf("too many arguments")
	}
	if inv.command != cmdPrint {
		return inv, nil
	}
	if !inv.print {
		return inv, fmt.Errorf("interactive mode is not simulated: pass --print")
	}
	if inv.outputFormat != "stream-json" {
		return inv, fmt.Errorf("only --output-format stream-json is simulated, got %q", inv.outputFormat)
	}
	return inv, nil
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
