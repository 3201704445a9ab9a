public import Decant
