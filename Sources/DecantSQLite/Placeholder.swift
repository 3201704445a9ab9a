import Decant
