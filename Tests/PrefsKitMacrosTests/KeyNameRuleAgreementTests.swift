import PrefsKit
@testable import PrefsKitMacros
import Testing

/// The key-name rule is written twice: in PrefsKit's `KeyName`, and in the macro's `KeyNameRule`,
/// which cannot import PrefsKit. Both give every name of ``KeyNameCorpus`` its verdict, for the
/// same reason.
@Suite("The key-name rule, in PrefsKit and in the macro")
struct KeyNameRuleAgreementTests {
    @Test("KeyName and KeyNameRule give each name its verdict, for the same reason", arguments: KeyNameCorpus.samples)
    func bothGiveTheVerdict(_ sample: KeyNameCorpus.Sample) {
        let problem = KeyNameRule.problem(with: sample.name)
        #expect((problem == nil) == sample.isValid, "the macro: \(problem ?? "valid")")
        do {
            try KeyName.validate(sample.name)
            #expect(sample.isValid, "PrefsKit: valid")
        } catch let error as PrefsError {
            #expect(!sample.isValid, "PrefsKit: \(error.message)")
            #expect(error.code == .invalidKey)
            #expect(problem.map { error.message.contains($0) } == true, "PrefsKit: \(error.message); the macro: \(problem ?? "valid")")
        } catch {
            Issue.record("KeyName.validate threw \(error), not a PrefsError")
        }
    }
}
