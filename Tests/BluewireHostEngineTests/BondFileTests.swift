import BluewireCore
import BluewireHostEngine
import BluewireSMP
import Testing

@Suite("Bond file (JSON)")
struct BondFileTests {
    static let bond: HostBond = {
        var local = DistributedKeys()
        local.longTermKey = Array(0x10..<0x20)
        local.ediv = 0xBEEF
        local.rand = [1, 2, 3, 4, 5, 6, 7, 8]
        local.identityResolvingKey = Array(0x30..<0x40)
        var peer = DistributedKeys()
        peer.identityResolvingKey = Array(0x50..<0x60)
        peer.identityAddress = SMPAddress(isRandom: true, octets: [0xBE, 0xA7, 0xB4, 0x24, 0xC3, 0xF9])
        peer.signatureKey = Array(0x70..<0x80)
        return HostBond(
            peer: BluetoothAddress(value: 0xF9C3_24B4_A7BE, type: .random), secureConnections: false, authenticated: true,
            keySize: 16, longTermKey: nil, localKeys: local, peerKeys: peer)
    }()

    @Test("every key survives encode → decode, SC and legacy bonds alike")
    func roundTrip() throws {
        var sc = Self.bond
        sc.secureConnections = true
        sc.longTermKey = Array(0xA0..<0xB0)
        sc.peer = BluetoothAddress(value: 0x0011_2233_4455, type: .public)
        let local = BluetoothAddress(value: 0xC45A_1700_B10E, type: .random)
        let text = BondFile.encode([Self.bond, sc], localAddress: local)
        #expect(try BondFile.decode(text) == [Self.bond, sc])
        #expect(try BondFile.decodeDocument(text).localAddress == local)
        #expect(try BondFile.decodeDocument(BondFile.encode([sc])).localAddress == nil)
        #expect(text.contains("\"peer\":\"F9:C3:24:B4:A7:BE/random\""))
        #expect(text.contains("\"identity\":\"F9:C3:24:B4:A7:BE/random\""))
        #expect(text.contains("\"ediv\":48879"))
    }

    @Test("a malformed file is refused with a message naming the field")
    func refusesMalformedFiles() {
        let cases: [(String, String)] = [
            ("[]", "bluewire_bonds"),
            (#"{"bluewire_bonds": 2, "bonds": []}"#, "version 2"),
            (#"{"bluewire_bonds": 1}"#, "bonds"),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "nope", "key_size": 16}]}"#, "bond 0: \"peer\""),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": 3}]}"#, "key_size"),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": 16, "ltk": "abcd"}]}"#, "bond 0.ltk"),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": 16, "local": {"ediv": 70000}}]}"#, "ediv"),
            ("{", "not JSON"),
            (#"{"bluewire_bonds": 1, "local_address": "x", "bonds": []}"#, "local_address"),
        ]
        for (text, fragment) in cases {
            do {
                _ = try BondFile.decode(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(fragment), "\(text) → \(error)")
            }
        }
    }

    @Test("a value of the wrong JSON type is named as a type error, not as out of range")
    func typeErrorsNamed() {
        let cases: [(String, String)] = [
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": "16"}]}"#,
             #"bond 0: "key_size" must be an integer 7-16, not a string"#),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55"}]}"#, #"bond 0: "key_size" is missing"#),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": 17}]}"#, #""key_size" must be 7-16, not 17"#),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": 16, "authenticated": "true"}]}"#,
             #""authenticated" must be true or false, not a string"#),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": 16, "ltk": 5}]}"#,
             "bond 0.ltk must be 16 octets of hex in a string, not a number"),
            (#"{"bluewire_bonds": 1, "bonds": [{"peer": "00:11:22:33:44:55", "key_size": 16, "local": {"ediv": "1"}}]}"#,
             "bond 0.local.ediv must be an integer 0-65535, not a string"),
        ]
        for (text, message) in cases {
            do {
                _ = try BondFile.decode(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(message), "\(text) → \(error)")
                #expect(!error.description.contains("must be 7-16") || message.contains("not 17"), "\(text) → \(error)")
            }
        }
    }
}
