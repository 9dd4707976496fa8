package h2

import "strconv"

// SettingID identifies a setting in a SETTINGS frame (RFC 9113 §6.5.2).
type SettingID uint16

// The settings of RFC 9113 §6.5.2, and RFC 8441's extended CONNECT.
const (
	SettingHeaderTableSize       SettingID = 0x1
	SettingEnablePush            SettingID = 0x2
	SettingMaxConcurrentStreams  SettingID = 0x3
	SettingInitialWindowSize     SettingID = 0x4
	SettingMaxFrameSize          SettingID = 0x5
	SettingMaxHeaderListSize     SettingID = 0x6
	SettingEnableConnectProtocol SettingID = 0x8
)

var settingNames = [...]string{
	SettingHeaderTableSize:       "HEADER_TABLE_SIZE",
	SettingEnablePush:            "ENABLE_PUSH",
	SettingMaxConcurrentStreams:  "MAX_CONCURRENT_STREAMS",
	SettingInitialWindowSize:     "INITIAL_WINDOW_SIZE",
	SettingMaxFrameSize:          "MAX_FRAME_SIZE",
	SettingMaxHeaderListSize:     "MAX_HEADER_LIST_SIZE",
	SettingEnableConnectProtocol: "ENABLE_CONNECT_PROTOCOL",
}

// String returns the setting's name as the RFCs spell it, without the
// "SETTINGS_" prefix, or "UNKNOWN_SETTING_0x..." for one they do not define.
func (id SettingID) String() string {
	if int(id) < len(settingNames) && settingNames[id] != "" {
		return settingNames[id]
	}
	return "UNKNOWN_SETTING_0x" + strconv.FormatUint(uint64(id), 16)
}

// MaxWindowSize is the largest flow-control window (RFC 9113 §6.9.1).
const MaxWindowSize = 1<<31 - 1

// Setting is one identifier/value pair of a SETTINGS frame.
type Setting struct {
	ID  SettingID
	Val uint32
}

// Valid checks the value ranges of §6.5.2 (and RFC 8441 §3): ENABLE_PUSH
// and ENABLE_CONNECT_PROTOCOL are 0 or 1, INITIAL_WINDOW_SIZE at most
// 2^31-1 (else FLOW_CONTROL_ERROR), MAX_FRAME_SIZE within 16384..16777215.
// Every other value, and every unknown identifier, is valid.
func (s Setting) Valid() error {
	if err := s.check(); err != nil {
		return err
	}
	return nil
}

func (s Setting) check() *Error {
	switch s.ID {
	case SettingEnablePush:
		if s.Val > 1 {
			return ErrSettingsEnablePush
		}
	case SettingInitialWindowSize:
		if s.Val > MaxWindowSize {
			return ErrSettingsWindowSize
		}
	case SettingMaxFrameSize:
		if s.Val < DefaultMaxFrameSize || s.Val > MaxFrameSizeLimit {
			return ErrSettingsMaxFrameSize
		}
	case SettingEnableConnectProtocol:
		if s.Val > 1 {
			return ErrSettingsConnectProto
		}
	}
	return nil
}
