import DecantCore
import DecantCodecs

extension XcodeMappingModel {
    /// What an expression needs beyond Decant's engine: the app classes it calls (`FUNCTION($entityPolicy, …)` with
    /// `policy`, `FUNCTION(CAST("Class", "Class"), …)`, a class constant), and whether part of it has no Decant
    /// counterpart at all. Empty classes and `false`: Decant runs it alone.
    public static func appCode(of node: NSExpressionNode, policy: String?) -> (classes: [String], unsupported: Bool) {
        var classes: [String] = []
        var unsupported = false
        func walk(_ expression: ValueExpression) {
            switch expression {
            case .call("call", let arguments):
                if case .literal(.string(let name))? = arguments.first, !classes.contains(name) { classes.append(name) }
                arguments.dropFirst(2).forEach(walk)
            case .call("unsupported", _): unsupported = true
            case .call(_, let arguments): arguments.forEach(walk)
            case .unary(_, let operand): walk(operand)
            case .binary(_, let left, let right):
                walk(left)
                walk(right)
            case .literal, .source: break
            }
        }
        walk(expression(node, policy: policy))
        return (classes, unsupported)
    }
}
