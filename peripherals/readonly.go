package peripherals

// The tools without effects: their audit records are written after they ran,
// in a group commit (tools.ReadOnly). Reading a pin's level or listing what is
// configured changes nothing. i2c/read and serial/read are not among them: a
// device's register may clear on read, and a read takes the port's bytes;
// nor is spi/transfer, whose every byte is also a write.

func (*gpioRead) ReadOnly()   {}
func (*gpioList) ReadOnly()   {}
func (*serialList) ReadOnly() {}
func (*i2cList) ReadOnly()    {}
func (*spiList) ReadOnly()    {}
