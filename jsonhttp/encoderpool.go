package jsonhttp

import (
	"encoding/json"
	"sync"
)

// encoderPool keeps encoders whose buffer stayed within maxPooled.
type encoderPool struct{ p sync.Pool }

func (p *encoderPool) get() *encoder {
	if e, _ := p.p.Get().(*encoder); e != nil {
		return e
	}
	e := new(encoder)
	e.enc = json.NewEncoder(&e.buf)
	return e
}

func (p *encoderPool) put(e *encoder) {
	if e.buf.Cap() > maxPooled {
		return
	}
	e.buf.Reset()
	p.p.Put(e)
}
