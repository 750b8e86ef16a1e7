import BluewireCore
import BluewireCrypto
import BluewireSMP

/// The controller's crypto (Core Vol 4 Part E §7.8.22, §7.8.36, §7.8.37), computed with swift-crypto
/// (`SwiftCryptoSMP`: CryptoExtras' AES block, Crypto's P-256), for hosts that do their Security Manager
/// crypto in the controller. HCI carries every value least significant octet first; swift-crypto takes
/// them most significant first.
extension LinkWorld {
    /// LE Encrypt: AES-128 of Plaintext_Data with Key, answered with Command Complete (Status, Encrypted_Data).
    func encrypt(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let key = Array(try r.readBytes(16, "Key"))
        let plaintext = Array(try r.readBytes(16, "Plaintext_Data"))
        try r.expectEnd("LE_Encrypt")
        guard let encrypted = try? SwiftCryptoSMP().aes128(key: key.reversed(), block: plaintext.reversed()) else {
            return c.commandComplete(Op.leEncrypt, [Status.unspecifiedError] + [UInt8](repeating: 0, count: 16))
        }
        c.commandComplete(Op.leEncrypt, [Status.success] + encrypted.reversed())
    }

    /// LE Read Local P-256 Public Key: Command Status, then LE Read Local P-256 Public Key Complete with a new
    /// key pair's public key (X, Y); the private key stays here for LE Generate DHKey.
    func readLocalP256PublicKey(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        try r.expectEnd("LE_Read_Local_P-256_Public_Key")
        var crypto = SwiftCryptoSMP()
        guard let pair = try? crypto.generateP256KeyPair() else {
            return c.commandStatus(Op.leReadLocalP256PublicKey, Status.unspecifiedError)
        }
        c.commandStatus(Op.leReadLocalP256PublicKey, Status.success)
        c.p256PrivateKey = pair.privateKey
        c.sendLEMeta(LESubevent.readLocalP256PublicKeyComplete,
                     [Status.success] + pair.publicKeyX.reversed() + pair.publicKeyY.reversed())
    }

    /// LE Generate DHKey: Command Status, then LE Generate DHKey Complete. A remote key not on the curve
    /// (CVE-2018-5383), or no local key pair yet, ends with Invalid HCI Command Parameters and an all-0xFF
    /// DHKey.
    func generateDHKey(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let x = Array(try r.readBytes(32, "Remote_P-256_Public_Key_X"))
        let y = Array(try r.readBytes(32, "Remote_P-256_Public_Key_Y"))
        try r.expectEnd("LE_Generate_DHKey")
        c.commandStatus(Op.leGenerateDHKey, Status.success)
        guard let privateKey = c.p256PrivateKey,
              let dhKey = try? SwiftCryptoSMP().diffieHellman(privateKey: privateKey, peerX: x.reversed(), peerY: y.reversed())
        else {
            return c.sendLEMeta(LESubevent.generateDHKeyComplete, [Status.invalidParameters] + [UInt8](repeating: 0xFF, count: 32))
        }
        c.sendLEMeta(LESubevent.generateDHKeyComplete, [Status.success] + dhKey.reversed())
    }
}
