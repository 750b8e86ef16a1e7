print("bluewire: under construction")
