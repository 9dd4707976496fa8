package lab

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Machine describes where the lab ran.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Kernel     string `json:"kernel"`
	MemoryMB   int    `json:"memory_mb"`
}

// ReadMachine describes this machine (Linux details from /proc).
func ReadMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: "unknown", Kernel: "unknown"}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		var kb int
		for _, c := range v {
			if c >= '0' && c <= '9' {
				kb = kb*10 + int(c-'0')
			} else if c == ' ' && kb > 0 {
				break
			}
		}
		m.MemoryMB = kb / 1024
	}
	return m
}

func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
